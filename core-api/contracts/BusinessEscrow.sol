// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title PTS business escrow
/// @notice Holds each brand's funds: reward tokens (perk sale proceeds, brand top-ups) and native ETH (gas budget).
///         A brand is identified by its address. Anyone may deposit for a brand; only the brand's own address
///         can withdraw its balances.
contract BusinessEscrow is ReentrancyGuard {
    using SafeERC20 for IERC20;

    /// @notice The reward token this escrow accounts for.
    IERC20 public immutable token;

    mapping(address brand => uint256) public tokenBalanceOf;
    mapping(address brand => uint256) public nativeBalanceOf;

    event TokenDeposited(address indexed brand, address indexed from, uint256 amount);
    event NativeDeposited(address indexed brand, address indexed from, uint256 amount);
    event TokenWithdrawn(address indexed brand, address indexed to, uint256 amount);
    event NativeWithdrawn(address indexed brand, address indexed to, uint256 amount);

    error ZeroAddress();
    error ZeroAmount();
    error InsufficientBalance(address brand, uint256 balance, uint256 requested);
    error NativeTransferFailed(address to, uint256 amount);
    /// @notice Plain ETH transfers are refused: they would not say which brand they are for.
    error UseDepositNative();

    constructor(IERC20 token_) {
        if (address(token_) == address(0)) revert ZeroAddress();
        token = token_;
    }

    /// @notice Pulls `amount` reward tokens from the caller (which must have approved this escrow) for `brand`.
    function depositToken(address brand, uint256 amount) external nonReentrant {
        if (brand == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        tokenBalanceOf[brand] += amount;
        token.safeTransferFrom(msg.sender, address(this), amount);
        emit TokenDeposited(brand, msg.sender, amount);
    }

    /// @notice Credits the ETH sent with the call to `brand`.
    function depositNative(address brand) external payable {
        if (brand == address(0)) revert ZeroAddress();
        if (msg.value == 0) revert ZeroAmount();
        nativeBalanceOf[brand] += msg.value;
        emit NativeDeposited(brand, msg.sender, msg.value);
    }

    /// @notice The calling brand withdraws `amount` of its reward tokens to `to`.
    function withdrawToken(address to, uint256 amount) external nonReentrant {
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        uint256 balance = tokenBalanceOf[msg.sender];
        if (balance < amount) revert InsufficientBalance(msg.sender, balance, amount);
        tokenBalanceOf[msg.sender] = balance - amount;
        token.safeTransfer(to, amount);
        emit TokenWithdrawn(msg.sender, to, amount);
    }

    /// @notice The calling brand withdraws `amount` wei of its native balance to `to`.
    function withdrawNative(address payable to, uint256 amount) external nonReentrant {
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        uint256 balance = nativeBalanceOf[msg.sender];
        if (balance < amount) revert InsufficientBalance(msg.sender, balance, amount);
        nativeBalanceOf[msg.sender] = balance - amount;
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert NativeTransferFailed(to, amount);
        emit NativeWithdrawn(msg.sender, to, amount);
    }

    receive() external payable {
        revert UseDepositNative();
    }
}
