from tmg.cli import main

main()
