"""Chapter 12b: vision-language pre-training in miniature.

* :mod:`.scenes` -- synthetic scenes (coloured shapes on a small canvas), their captions, the
  "detector" regions and a compositional held-out split;
* :mod:`.models` -- a single-stream model (one Transformer over words and regions) and a
  two-stream model (a text stream and a visual stream joined by co-attention);
* :mod:`.pretrain` -- the three objectives (image-conditioned MLM, masked region modelling,
  image-text matching), the training loop and the evaluations (ITM, retrieval, colour cloze);
* :mod:`.visual_words` -- VideoBERT's idea: k-means over region features into visual words.
"""
