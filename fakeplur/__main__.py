from fakeplur.server import main

main()
