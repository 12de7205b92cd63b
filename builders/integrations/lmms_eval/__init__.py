"""The lmms-eval task folder (``lmms-eval --include_path <this folder> --tasks bqa,...``).

Its YAML files follow lmms-eval v0.7.2's task format (``lmms_eval/tasks/*``: ``include``,
``dataset_path``, ``process_docs``, ``doc_to_visual``, ``doc_to_text``, ``process_results``,
``metric_list`` with ``!function`` aggregations); the functions are in
:mod:`builders.integrations.lmms_eval.tasks`. ``vqabench integrations path lmms-eval`` prints this
folder; with ``--data`` it writes a copy whose templates name local dataset folders.
"""
