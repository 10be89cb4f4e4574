git clone https://github.com/OpenAccess-AI-Collective/axolotl.git
cd axolotl 
pip install packaging 
pip install -e '.[flash-attn,deepspeed]'