"""The Hugging Face Hub: write and check the Hub layout of an exported folder, publish a revision."""
