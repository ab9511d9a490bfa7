"""The offline demo and the recorded agent runs it is built from (``segue._demo.trajectory``)."""
