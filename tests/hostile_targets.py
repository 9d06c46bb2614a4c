"""The article's designs as the hostile pass reaches them (qa/target.py): a Target and its Normal per design."""

from wismo.checks.target import Normal, of_study
from wismo.studies.declaration import article


def target(design: str):
    """The article study's target for `design` (a design wismo serves)."""
    return next(t for t in of_study(article()) if t.design == design)


def normal(design: str) -> Normal:
    """A fresh normal call for `design`: its first answer becomes the one every later answer must repeat."""
    return Normal(target(design))
