# Level: api, webui > chat, eval, train > data, model > extras, hparams

__version__ = "1.0.0.dev"
