from nuosu_llm.training import main

if __name__ == "__main__":
    main()
