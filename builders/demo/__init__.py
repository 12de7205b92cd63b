"""``vqabench demo``: one offline tour of the whole toolchain on the bundled samples.

Rebuild both samples from their recorded pipeline replies (:mod:`.samples`), export them in Hub
layout and load them back, sample frames, replay a scripted baseline's answers through the
evaluation runners (:mod:`.baseline`, :mod:`.recordings`), score them with every metric
(:mod:`.scoring`), print the paper-style tables (:mod:`.tables`) and write reports
(:mod:`.run`, entry point :func:`builders.demo.run.run_demo`).
"""
