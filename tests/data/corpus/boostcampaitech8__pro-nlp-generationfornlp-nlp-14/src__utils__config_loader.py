"""YAML 설정 파일 로더

YAML config 파일에서 설정을 로드하는 유틸리티.
CLI arguments 없이 YAML 파일만으로 설정 관리.

Config 구조:
    configs/config.yaml 하나로 train, inference, wandb 설정을 통합 관리.
    - train: 학습 관련 설정
    - inference: 추론 관련 설정
    - wandb: W&B 로깅 설정

새 옵션 추가 시:
    1. dataclass 필드 추가: report_to: str = "none"
    2. YAML에 값 추가: train.training.report_to: "wandb"
    3. _yaml_key_mapping에 매핑 추가: "training_report_to": "report_to"
"""

from abc import ABC
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import yaml
from typing_extensions import Self


def _load_yaml_config(config_path: str | Path) -> dict[str, Any]:
    """YAML 설정 파일 로드"""
    with open(config_path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def _flatten_config(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """중첩된 config를 flat하게 변환

    예: {"training": {"epochs": 3}} -> {"training_epochs": 3}
    """
    flat = {}
    for key, value in config.items():
        full_key = f"{prefix}{key}" if prefix else key
        if isinstance(value, dict):
            flat.update(_flatten_config(value, f"{full_key}_"))
        else:
            flat[full_key] = value
    return flat


class BaseConfig(ABC):
    """Config 기본 클래스

    YAML 로드와 wandb config 변환 기능 제공.
    서브클래스에서 _yaml_key_mapping과 _yaml_sections를 정의해야 함.
    """

    _yaml_key_mapping: ClassVar[dict[str, str]]
    _yaml_sections: ClassVar[list[str]]  # ["train", "wandb"] 등 여러 섹션 지정 가능

    @classmethod
    def from_yaml(cls, config_path: str | Path) -> Self:
        """YAML 파일에서 Config 생성

        _yaml_sections에 정의된 모든 섹션을 병합하여 로드.
        """
        yaml_config = _load_yaml_config(config_path)

        # 여러 섹션을 병합
        merged_flat = {}
        for section in cls._yaml_sections:
            section_config = yaml_config.get(section, {})
            flat_config = _flatten_config(section_config)
            merged_flat.update(flat_config)

        # YAML 키를 필드명으로 변환
        kwargs = {}
        for yaml_key, attr_name in cls._yaml_key_mapping.items():
            if yaml_key in merged_flat:
                kwargs[attr_name] = merged_flat[yaml_key]

        return cls(**kwargs)


@dataclass
class TrainConfig(BaseConfig):
    """학습 설정

    configs/config.yaml의 train 섹션과 wandb 섹션에서 설정을 로드함.
    """

    _yaml_sections: ClassVar[list[str]] = ["train", "wandb"]

    # 모델 설정
    model_name: str
    enable_thinking: bool

    # 데이터 설정
    train_data: str
    eval_data: str
    prompt_style: str
    balance_by_answer: bool

    # 학습 설정
    output_dir: str
    max_seq_length: int
    batch_size: int
    gradient_accumulation_steps: int
    epochs: int
    learning_rate: float
    weight_decay: float
    logging_steps: int
    logging_strategy: str
    seed: int

    # LoRA 설정
    lora_r: int
    lora_alpha: int
    lora_dropout: float

    # wandb 설정
    wandb_entity: str
    wandb_project: str
    wandb_run_name: str | None

    _yaml_key_mapping: ClassVar[dict[str, str]] = {
        # train 섹션
        "model_name": "model_name",
        "model_enable_thinking": "enable_thinking",
        "data_train_path": "train_data",
        "data_eval_path": "eval_data",
        "data_prompt_style": "prompt_style",
        "data_balance_by_answer": "balance_by_answer",
        "training_output_dir": "output_dir",
        "training_max_seq_length": "max_seq_length",
        "training_batch_size": "batch_size",
        "training_gradient_accumulation_steps": "gradient_accumulation_steps",
        "training_epochs": "epochs",
        "training_learning_rate": "learning_rate",
        "training_weight_decay": "weight_decay",
        "training_logging_steps": "logging_steps",
        "training_logging_strategy": "logging_strategy",
        "training_seed": "seed",
        "lora_r": "lora_r",
        "lora_alpha": "lora_alpha",
        "lora_dropout": "lora_dropout",
        # wandb 섹션
        "entity": "wandb_entity",
        "project": "wandb_project",
        "run_name": "wandb_run_name",
    }

    def to_wandb_config(self) -> dict[str, Any]:
        """wandb.init()에 전달할 config dict 생성

        dataclass의 모든 필드를 자동으로 포함.
        새 필드 추가 시 이 메서드 수정 불필요.
        """
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if not field.name.startswith("_")
        }


@dataclass
class InferenceConfig(BaseConfig):
    """추론 설정

    configs/config.yaml의 inference 섹션에서 설정을 로드함.
    """

    _yaml_sections: ClassVar[list[str]] = ["inference"]

    # 모델 설정, hf 모델명 또는 체크포인트 경로
    checkpoint_path: str
    enable_thinking: bool

    # 데이터 설정
    test_data: str
    prompt_style: str

    # FLM ONLY 토큰 길이 설정
    max_seq_length: int

    # mcq chain 모델 설정
    use_remote: bool

    # 출력 설정
    output_path: str

    # rag 사용 여부
    use_rag: bool

    # Pipeline 설정
    max_retrieval_context_chars: int
    max_paragraph_chars_for_planner: int
    query_plan_log_path: str

    # reranker 설정
    num_retrieved_docs: int
    top_k_per_query: int

    # Planner LLM 설정
    planner_llm_temperature: float

    _yaml_key_mapping: ClassVar[dict[str, str]] = {
        "model_checkpoint_path": "checkpoint_path",
        "model_enable_thinking": "enable_thinking",
        "data_test_path": "test_data",
        "data_prompt_style": "prompt_style",
        "output_path": "output_path",
        "FLM_max_seq_length": "max_seq_length",
        "use_remote": "use_remote",
        "pipeline_max_retrieval_context_chars": "max_retrieval_context_chars",
        "pipeline_max_paragraph_chars_for_planner": "max_paragraph_chars_for_planner",
        "pipeline_query_plan_log_path": "query_plan_log_path",
        "pipeline_num_retrieved_docs": "num_retrieved_docs",
        "pipeline_top_k_per_query": "top_k_per_query",
        "planner_llm_temperature": "planner_llm_temperature",
        "use_rag": "use_rag",
    }


@dataclass
class PreprocessConfig(BaseConfig):
    """전처리 설정

    configs/preprocess.yaml의 preprocess 섹션에서 설정을 로드함.
    """

    _yaml_sections: ClassVar[list[str]] = ["preprocess"]

    # 입력 파일
    train_file: str

    # 출력 파일
    source_labeled_file: str
    with_folds_file: str
    train_split_file: str
    eval_split_file: str

    # SGKFold 설정
    n_splits: int
    eval_fold: int
    random_seed: int

    _yaml_key_mapping: ClassVar[dict[str, str]] = {
        # input 섹션
        "input_train_file": "train_file",
        # output 섹션
        "output_source_labeled_file": "source_labeled_file",
        "output_with_folds_file": "with_folds_file",
        "output_train_split_file": "train_split_file",
        "output_eval_split_file": "eval_split_file",
        # sgkfold 섹션
        "sgkfold_n_splits": "n_splits",
        "sgkfold_eval_fold": "eval_fold",
        "sgkfold_random_seed": "random_seed",
    }


@dataclass
class RetrievalConfig(BaseConfig):
    """Retrieval 설정

    configs/config.yaml의 retrieval 섹션에서 설정을 로드함.
    ES/Embedder 연결 정보는 환경변수에서 읽음 (dotenv).
    """

    _yaml_sections: ClassVar[list[str]] = ["retrieval"]

    # RRF 설정
    use_rrf: bool
    rrf_rank_constant: int

    # 인덱스명
    parents_index: str
    chunks_index: str

    # Parent 검색 설정 (Stage 1)
    parent_size: int
    parent_sparse_weight: float
    parent_dense_weight: float

    # Chunk 검색 설정 (Stage 2)
    chunk_size: int
    chunk_sparse_weight: float
    chunk_dense_weight: float

    # 웹서치/로컬 가중치 (EnsembleRetriever)
    local_retriever_weight: float
    web_retriever_weight: float

    _yaml_key_mapping: ClassVar[dict[str, str]] = {
        "use_rrf": "use_rrf",
        "rrf_rank_constant": "rrf_rank_constant",
        "parents_index": "parents_index",
        "chunks_index": "chunks_index",
        # Parent 검색
        "parent_size": "parent_size",
        "parent_sparse_weight": "parent_sparse_weight",
        "parent_dense_weight": "parent_dense_weight",
        # Chunk 검색
        "chunk_size": "chunk_size",
        "chunk_sparse_weight": "chunk_sparse_weight",
        "chunk_dense_weight": "chunk_dense_weight",
        # 웹서치/로컬 가중치 (EnsembleRetriever)
        "ensemble_local_retriever_weight": "local_retriever_weight",
        "ensemble_web_retriever_weight": "web_retriever_weight",
    }
