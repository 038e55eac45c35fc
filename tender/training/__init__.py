"""Training: the bid model and the fine-tuned encoder. Never imported by the product's hot path."""
