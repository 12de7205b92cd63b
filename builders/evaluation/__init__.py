"""Evaluation runners: ask a VideoLLM every item of a split, write its predictions; the options and
the prediction-run core both runners share."""
