python run_seq2seq.py  configs/tensor_train_adapters.json
