"""The offline demo and the recorded agent runs it is built from (``segue.demo.trajectory``)."""
