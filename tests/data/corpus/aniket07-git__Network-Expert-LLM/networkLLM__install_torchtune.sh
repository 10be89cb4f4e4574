pip install torch torchvision torchao

pip install torchtune
