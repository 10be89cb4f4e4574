def main():
    print("Hello from interventions-project!")


if __name__ == "__main__":
    main()
