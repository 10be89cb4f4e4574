# Level: api, webui > chat, eval, train > data, model > extras, hparams

__version__ = "0.7.1.dev0"
