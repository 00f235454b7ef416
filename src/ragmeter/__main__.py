from ragmeter.cli import main

main()
