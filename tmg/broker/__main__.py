from tmg.broker.entry import main

main()
