"""Importers of models from other formats into rlx IR (`onnx`)."""
