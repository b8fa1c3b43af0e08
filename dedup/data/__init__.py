"""Packaged data of the dedup methods (stopword lists, default antecedents)."""
