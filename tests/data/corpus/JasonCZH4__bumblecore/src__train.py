from bumblecore.training import launch_train_from_cli

def main():
    launch_train_from_cli()

if __name__ == "__main__":
    main()