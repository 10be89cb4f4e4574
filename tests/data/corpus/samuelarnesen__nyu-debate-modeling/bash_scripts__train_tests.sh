python scripts/run_sft.py --config="Test" --load_only --local --test
python scripts/run_ppo.py --config='Test' --load_only --local --test
python scripts/run_iterative_dpo.py --config='Test - Iterative' --load_only --local --test
python scripts/run_sft.py --config="Test - Open" --load_only --local --test
