"""The request of `sizer recommend --inference` (``"task": "inference"`` on /v1/recommend): the model,
the targets it must meet, and what the search may try. Its own module so that the search under load
(:mod:`sizer.serving.load_search`) and the offline search (:mod:`sizer.serving.recommend_devices`) both
read it without importing each other."""
from __future__ import annotations



from sizer.schemas.serving_requests import InferenceRecommendRequest as InferenceRecommendRequest  # noqa: F401 (moved)
