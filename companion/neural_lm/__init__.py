"""Chapter 2: neural language models (Bengio's NNLM, hierarchical softmax, LBL, SENNA ranking)."""

from .tree import BinaryTree, balanced_tree, clustered_tree, huffman_tree

__all__ = ["BinaryTree", "balanced_tree", "clustered_tree", "huffman_tree"]
