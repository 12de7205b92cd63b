"""The scripts that write the bundled samples and record their replies (maintainers', from a checkout).

``make_bqa_sample`` and ``make_marinelife_sample`` write the sample clips and annotations into
``bqa/sample/`` and ``marinelife16k/sample/``; ``record_*_pipeline`` record the scripted responders'
replies that rebuild each sample offline (``vqabench <benchmark> build --sample --replay``), and
``record_*_baseline`` the scripted baseline's answers and judge scores that ``vqabench demo`` replays.
They play the test doubles through the real pipelines and runners, so, like the doubles, they stay
out of the wheel: the wheel carries only what they wrote.
"""
