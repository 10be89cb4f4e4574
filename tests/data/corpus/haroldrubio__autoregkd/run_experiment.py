from src.autoregkd.interface.cli import experiment
if __name__ == '__main__':
    experiment()