from llmtuner import run_exp


def main():
    run_exp()


if __name__ == "__main__":
    main()
