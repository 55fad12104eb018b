"""CustomResourceDefinitions: validation, structural schemas, serving of custom types."""
