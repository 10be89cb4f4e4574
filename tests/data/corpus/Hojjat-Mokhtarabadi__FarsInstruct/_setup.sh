git clone --branch persian_temps https://github.com/Hojjat-Mokhtarabadi/promptsource.git
cd promptsource
pip install -e . --index-url https://pypi.tuna.tsinghua.edu.cn/simple
cd ..

pip install -e .
