"""vLLM server settings that TRL 1.0's colocate default leaves unread.

GRPOConfig, RLOOConfig and OnlineDPOConfig took vllm_mode="server" as their default from TRL 0.18 to 0.29: a
recipe with use_vllm and vllm_server_host / vllm_server_port reached the server that `trl vllm-serve` runs. From
TRL 1.0 the default is "colocate" (trl/trainer/grpo_config.py, rloo_config.py, experimental/online_dpo), so the
same recipe, installed fresh, starts vLLM inside every training process instead: the server settings go unread,
the GPUs the server was given sit idle, and vLLM's KV cache shares memory with training.
"""

from __future__ import annotations

from seqprof.config.key_history import KeyHistory, run_release_said
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.dialects.common import as_bool

COLOCATE_DEFAULT_FROM = "1.0.0"
SERVER_KEYS = ("vllm_server_base_url", "vllm_server_host", "vllm_server_port", "vllm_server_timeout")
TRAINERS = frozenset({"grpo", "rloo", "online_dpo"})


def server_settings_unread(cfg: LoadedConfig, trainer: str, pins: Pins, history: KeyHistory
                           ) -> list[ConfigDiagnostic]:
    """The server keys of a use_vllm recipe that states no vllm_mode, at a release the pins install that defaults
    to colocate; not where a launch line passes vllm_mode or the project declares or sets it in code."""
    from packaging.version import Version

    data = cfg.data
    server = [k for k in SERVER_KEYS if data.get(k) is not None]
    if trainer not in TRAINERS or "vllm_mode" in data or not server or as_bool(data.get("use_vllm")) is not True:
        return []
    installed = history.run_release("trl", pins)
    if installed is None or pins.vcs("trl") is not None or Version(installed) < Version(COLOCATE_DEFAULT_FROM):
        return []
    if _mode_set_elsewhere(cfg.path):
        return []
    release = run_release_said("trl", pins, installed)
    keys = ", ".join(server)
    return [ConfigDiagnostic(
        kind="vllm_server_unread", key=server[0], file=cfg.path, line=cfg.line(server[0]) or 1,
        message=f"use_vllm with {keys} but no vllm_mode: from trl 1.0 vllm_mode defaults to 'colocate' ({release}), "
                f"so vLLM runs inside the training processes and {keys} {'is' if len(server) == 1 else 'are'} "
                "never read; the server `trl vllm-serve` runs is left idle")]


def _mode_set_elsewhere(config_path: str) -> bool:
    """A launch line passes --vllm_mode, or the project declares or sets vllm_mode in its own code."""
    from seqprof.config.launches import set_outside_the_file

    return set_outside_the_file(config_path, ("vllm_mode",))
