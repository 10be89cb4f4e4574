python experiments/run_simcse.py nlp_course/dictalm2_simcse.json
