"""The diagnosis pipeline: roles → parse → Gatekeeper → Verifier → guardrails → Composer → answer."""

from veridiag.pipeline.audit import audit_chain
from veridiag.pipeline.service import DiagnosisPipeline, DiagnosisResult, PipelineOptions

__all__ = ["DiagnosisPipeline", "DiagnosisResult", "PipelineOptions", "audit_chain"]
