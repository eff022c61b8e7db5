from skillc.cli import main

main()
