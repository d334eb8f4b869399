"""Documents, not just strings: sentence segmentation with the layout kept, placeholder masking,
and markup (HTML/XML) handling, below every API surface."""
