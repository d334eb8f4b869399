"""`dragoman route`: a language-pair-aware reverse proxy over several dragoman servers."""
