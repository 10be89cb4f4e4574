import os
import argparse
import json
import sys
import time
import torch
import yaml
from easydict import EasyDict
from loguru import logger

from eval.eval_by_category import run_evaluation
from my_datasets import get_calibrate_loader,make_data_module,get_dataset_loader, cola_calibrate_loader
from quantization.layers import LinearQuantHub
from quantization.llama_seq import llama_sequential, llama_omniquant
from quantization.qwen_seq import qwen_sequential 
from quantization.deepseek_seq import deepseek_sequential, deepseek_omniquant
from utils.load_model import BaseModel, get_accelerate_model, load_model_and_tokenizer
from quantization.efficientqat.block_ap import block_ap, get_loaders
from quantization.efficientqat.int_linear_real import trans_e2e2llama_model, trans_blockwise2llama_model
from sparse.lib.prune import prune_wanda, prune_magnitude, prune_sparsegpt, prune_ablate, check_sparsity


def get_model(config):
    # 修复：当 quant 为 false 时，不从 quant 里取 device
    quant_config = config.get("quant")
    device_map = quant_config.get("device", None) if isinstance(quant_config, dict) else None
    
    basemodel = BaseModel(config, device_map=device_map)
    tokenizer = basemodel.build_tokenizer()
    model = basemodel.build_model()
    return model, tokenizer , basemodel


def main(config):
    SEQUENTIAL_COMPRESSION_MAP = {
        "llama": llama_sequential,
        "qwen": qwen_sequential,
        "deepseek": deepseek_sequential,
    }
    OMNIQUANT_COMPRESSION_MAP = {
        "llama": llama_omniquant,
        "deepseek": deepseek_omniquant,
    }
    compression_func = SEQUENTIAL_COMPRESSION_MAP[config.base_model.type.lower()]
    logger.info(f"sequential compression_func: {compression_func.__name__}")
    
    new_model = None
    if config.get("quant", False):

        if config.quant.method in ["qlora", "qalora","irlora"]:
            model,tokenizer = get_accelerate_model(config.base_model,config.quant.method)
            calibrate = make_data_module(tokenizer=tokenizer, args=config.quant.data)
        elif config.quant.method == "onebit" or config.quant.method == "qat-llm":
            from quantization.onebit.core import get_train_args
            model_args, data_args, training_args, finetuning_args = get_train_args(config.quant.args)
            model,tokenizer = load_model_and_tokenizer(config.quant.method, model_args,finetuning_args,training_args.do_train)
            calibrate = get_dataset_loader(tokenizer=tokenizer, data_args=data_args, training_args=training_args)
        elif config.quant.method == "efficientqat_e2e":
            pass
        else:
            model, tokenizer, basemodel = get_model(config)
            if config.quant.data.name == "cola":
                calibrate = cola_calibrate_loader(tokenizer=tokenizer, model=model, **config.quant.data)
            else:
                calibrate = get_calibrate_loader(tokenizer=tokenizer, **config.quant.data)
        
        if config.get("sparse", False):
            # Handling n:m sparsity
            prune_n, prune_m = 0, 0
            device = model.device
            model.seqlen = config.quant.seqlen
            if config.sparse.sparsity_type != "unstructured":
                assert config.sparse.sparsity_ratio == 0.5, "sparsity ratio must be 0.5 for structured N:M sparsity"
                logger.info(f"sparse config: {config.sparse}")
                logger.info(f"sparsity type: {config.sparse.sparsity_type}")
                prune_n, prune_m = map(int, config.sparse.sparsity_type.split(":"))
            
            if config.sparse.sparsity_ratio != 0:
                logger.info("pruning starts")
                if config.sparse.method == "wanda":
                    prune_wanda(config.sparse, calibrate, model, tokenizer, device, prune_n=prune_n, prune_m=prune_m)
                elif config.sparse.method == "magnitude":
                    prune_magnitude(config.sparse, model, tokenizer, device, prune_n=prune_n, prune_m=prune_m)
                elif config.sparse.method == "sparsegpt":
                    prune_sparsegpt(config.sparse, calibrate, model, tokenizer, device, prune_n=prune_n, prune_m=prune_m)
                elif "ablate" in config.sparse.method:
                    prune_ablate(config.sparse, calibrate, model, tokenizer, device, prune_n=prune_n, prune_m=prune_m)
                
                sparsity_ratio = check_sparsity(model)
                logger.info(f"sparsity sanity check {sparsity_ratio:.4f}")
            else:
                logger.info("sparsity ratio is 0, no pruning")

        if config.quant.method == "omniquant":
            omniquant_compression_func = OMNIQUANT_COMPRESSION_MAP[config.base_model.type.lower()]
            model = omniquant_compression_func(config.base_model.path, model, calibrate, config.quant, logger=logger)
            new_model = model
            logger.info(f"omniquant compression_func: {omniquant_compression_func.__name__}")
        elif config.quant.method == "quip_sharp":
            from quantization.llama_seq import llama_quipsharp
            from quantization.qwen_seq import qwen_quipsharp
            from quantization.deepseek_seq import deepseek_quipsharp
            QUIP_SHARP_COMPRESSION_MAP = {
                "llama": llama_quipsharp,
                "qwen": qwen_quipsharp,
                "deepseek": deepseek_quipsharp,
            }
            quip_sharp_compression_func = QUIP_SHARP_COMPRESSION_MAP[config.base_model.type.lower()]
            logger.info(f"quip_sharp compression_func: {quip_sharp_compression_func.__name__}")
            model = quip_sharp_compression_func(calibrate,config)
            new_model = model
        elif config.quant.method == "fbi_llm":
            from quantization.fbi_llm.fbi_train import train_fbi
            model = train_fbi(model, calibrate, config)
            new_model = model
        elif config.quant.method == "efficientqat_block":
            trainloader, valloader = get_loaders(
                config.quant.data.name,
                tokenizer,
                config.quant.data.train_size,
                config.quant.data.val_size,
                seed=config.quant.data.seed,
                seqlen=config.quant.data.training_seqlen,
                model_type=config.base_model.type,
            )
            block_ap(
                model,
                config,
                trainloader,
                valloader,
                logger,
            )
        elif config.quant.method == "efficientqat_e2e":
            from quantization.efficientqat.e2e import train
            new_model,tokenizer = train(config)
        elif config.quant.method in ["qlora", "qalora","irlora"]:
            from quantization.qlora.qlora import train
            model = train(model=model,tokenizer=tokenizer,calibrate_data=calibrate, args=config.quant.args)
            new_model = model
        elif config.quant.method == "onebit" or config.quant.method == "qat-llm":
            from quantization.onebit.kd import run_kd
            model = run_kd(model=model,tokenizer=tokenizer,dataset=calibrate,model_args=model_args,data_args=data_args,training_args=training_args)
            new_model = model
        else:
            new_model = basemodel.replace_module(model, exclude_layers=config.quant.skip_layers, include_layers=['.*'])
            new_model = compression_func(model=new_model, calibrate_data=calibrate, **config.quant)
            logger.info(f'model: {model}')
            logger.info(f'tokenizer: {tokenizer}')

    if config.get("save", False) and config.get("quant", False):
        if config.quant.method == "efficientqat_e2e":
            model = trans_e2e2llama_model(new_model, mixed_precision=config.quant.mixed_precision, maskfile_dir=config.quant.maskfile_dir)
        elif config.quant.method == "efficientqat_block":
            model = trans_blockwise2llama_model(model)
        # config.quant.method in ["gptq"]:
        else:
            model = basemodel.replace_module(new_model, module_type=LinearQuantHub, new_module_type="", display=True)

        gen_config = model.generation_config
        gen_config.do_sample = True
        model.save_pretrained(config.save)
        tokenizer.save_pretrained(config.save)

    if config.get("eval", False):
        if new_model is None:
            config.base_model.path = config.save
            if 'quant' in config and config.quant.method == "onebit":
                from transformers import BitLlamaForCausalLM, AutoTokenizer
                new_model = BitLlamaForCausalLM.from_pretrained(config.base_model.path)
                tokenizer = AutoTokenizer.from_pretrained(config.base_model.path, use_fast=False)
            elif 'quant' in config and config.quant.method == "qat-llm":
                from transformers import QatLlamaForCausalLM, AutoTokenizer
                new_model = QatLlamaForCausalLM.from_pretrained(config.base_model.path)
                tokenizer = AutoTokenizer.from_pretrained(config.base_model.path, use_fast=False)
            else:
                new_model, tokenizer, _ = get_model(config)
        evals = config.eval
        device = evals.get('device', "cpu")

        if new_model.device.type == device:
            model = new_model
        else:
            model = new_model.to(device)

        for eval_config in evals.tasks:
            eval_config = dict(eval_config)
            run_evaluation(model, tokenizer, device,**eval_config)



def mkdirs(path):
    if not os.path.exists(path):
        os.makedirs(path)


if __name__ == '__main__':
    logger.remove()
    logger.add(sys.stdout, level='INFO')
    llmc_start_time = time.time()
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', default="config/llama_gptq.yml", type=str)
    parser.add_argument("--local_rank", type=int, default=-1, help="Local rank for distributed training")
    args = parser.parse_args()
    import os

    # 设置 HuggingFace 的缓存和镜像源
    os.environ['HF_HOME'] = './.huggingface'
    os.environ['HF_DATASETS_CACHE'] = './.huggingface'
    os.environ['HF_ENDPOINT'] = 'https://hf-mirror.com'


    with open(args.config, 'r') as file:
        config = yaml.safe_load(file)
    config = EasyDict(config)

    logger.info(f'args: {args}')
    logger.info(f'config:\n{json.dumps(config, ensure_ascii=False, indent=4)}')


    if config.get("save"):
        mkdirs(config.save)

    # Synchronize all processes after directory creation
    # dist.barrier()

    main(config)


    llmc_end_time = time.time()
    llmc_duration_time = llmc_end_time - llmc_start_time
    logger.info(f'llmc_duration_time: {llmc_duration_time} s')
    logger.info('--- llmc finished ---')


# export HF_HOME=/home/yejinyu/huggingface_3_copy
#
# export HF_DATASETS_CACHE=/home/yejinyu/huggingface_3_copy
#
# export HF_ENDPOINT=https://hf-mirror.com


# export PYTHONPATH=/ssd/yejinyu/MI-optimize-main:$PYTHONPATH
# export HF_ENDPOINT=https://hf-mirror.com
# export HF_HOME=/ssd/yejinyu/huggingface_3_copy
# export HF_DATASETS_CACHE=/ssd/yejinyu/huggingface_3_copy
