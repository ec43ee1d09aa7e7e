from tmg.broker.daemon import main

main()
