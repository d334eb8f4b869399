"""`dragoman eval`: translation quality of a running server (chrF, BLEU and failure counts per
language pair and input kind) on parallel sets built from text that ships in Python packages."""
