python experiments/run_mntp.py nlp_course/dictalm2_mntp.json
