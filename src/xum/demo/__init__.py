"""The offline demo and the recorded agent runs it is built from (``xum.demo.trajectory``)."""
