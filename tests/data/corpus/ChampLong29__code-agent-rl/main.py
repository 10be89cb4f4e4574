def main():
    print("Hello from code-agent-rl!")


if __name__ == "__main__":
    main()
