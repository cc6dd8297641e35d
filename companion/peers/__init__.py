"""Peer implementations the book compares against (built or driven from here, never imported at
package import time): KenLM's ``lmplz``/``query`` (:mod:`companion.peers.kenlm_build`)."""
