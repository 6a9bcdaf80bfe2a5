"""vram-bot: how much GPU memory fully fine-tuning an LLM needs, as a Discord bot and a CLI."""

__version__ = "0.1.0"
