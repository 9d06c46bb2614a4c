"""The agent loop of the article and its model backends (scripted, openai, openai-chat, anthropic)."""
