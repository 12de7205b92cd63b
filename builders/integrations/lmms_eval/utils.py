"""What the task YAMLs beside this file name with ``!function utils.<name>``.

lmms-eval runs this file anew for each tag, so it only binds the project's task functions to this
folder (whose ``_*_template_yaml`` files say where the data is); see
:mod:`builders.integrations.lmms_eval.tasks`.
"""

from pathlib import Path

from builders.integrations.lmms_eval.tasks import TaskFunctions

globals().update(TaskFunctions(Path(__file__).resolve().parent).functions())
