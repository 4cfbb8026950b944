import os
VERSION = "1.0"
DEBUG: bool = False
if os.name == "nt":
    SEP = "\\"
x = call(a=1,
         b=2)
def f(y=3):
    z = y
    return z
class Point:
    """Doc.
    fake = 1
    """
    dims = 2
    x: int
    y: float = 0.0
    def __init__(self):
        self.x = 1
    class Meta:
        ordering = ["x"]
a == b
