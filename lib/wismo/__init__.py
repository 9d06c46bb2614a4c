"""wismo: where should the evidence for a support question be gathered, by the model or by code?"""

__version__ = "0.1.0"
