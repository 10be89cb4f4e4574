python3 run_seq2seq.py  configs/cola/tt_rank/tt_rank_2.json
python3 run_seq2seq.py  configs/cola/tt_rank/tt_rank_4.json
python3 run_seq2seq.py  configs/cola/tt_rank/tt_rank_16.json