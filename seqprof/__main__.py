from seqprof.cli import main

main()
