from hilbridge.cli.main import main

main()
