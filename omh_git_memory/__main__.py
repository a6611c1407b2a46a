from omh_git_memory.cli import main

main()
