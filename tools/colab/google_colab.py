"""Stand-in for Colab's ``google.colab`` in the course's Colab simulation (tools/colab_sim.py).

Colab's kernel imports ``google.colab`` before a notebook's first cell runs. The chapters
only ask whether it is there (``"google.colab" in sys.modules``), to install the package
in their first cell. Nothing here is Colab's code.
"""

SIMULATION = True
