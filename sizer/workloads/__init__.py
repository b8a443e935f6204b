"""What is trained or served: architectures by name, Hugging Face configs, generated layer graphs."""
